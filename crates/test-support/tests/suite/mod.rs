mod scripted;
mod tools;
