//! Chapter 11: recovery around the model client.

mod recovery;
