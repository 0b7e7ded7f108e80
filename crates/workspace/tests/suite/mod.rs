mod boundary;
mod process;
mod store;
