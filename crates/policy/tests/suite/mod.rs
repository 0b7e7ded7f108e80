mod pipeline;
mod rules;
