mod keeps;
mod session;
mod store;
