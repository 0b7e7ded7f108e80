mod output;
mod registry;
mod shell;
