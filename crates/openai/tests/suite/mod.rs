mod adapter;
mod bounds;
mod wire;
