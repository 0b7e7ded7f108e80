mod attacks;
mod keeps;
mod session;
mod store;
