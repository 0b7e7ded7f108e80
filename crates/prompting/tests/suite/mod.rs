mod context;
mod renderer;
