mod boundary;
mod process;
