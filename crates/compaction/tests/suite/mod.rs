mod shaping;
mod summary;
