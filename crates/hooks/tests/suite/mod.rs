mod context;
mod output;
mod registry;
mod shell;
