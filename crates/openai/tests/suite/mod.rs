mod adapter;
mod bounds;
mod sse_server;
mod stream;
mod wire;
