mod checked;
mod context;
mod provider;
mod renderer;
