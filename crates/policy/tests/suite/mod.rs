mod pipeline;
