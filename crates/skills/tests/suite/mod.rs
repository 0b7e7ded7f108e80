mod catalog;
mod trust;
