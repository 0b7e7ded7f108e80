mod adapter;
mod bounds;
