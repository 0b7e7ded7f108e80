mod context;
mod provider;
mod renderer;
