mod session;
mod store;
