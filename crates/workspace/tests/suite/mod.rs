mod boundary;
mod store;
