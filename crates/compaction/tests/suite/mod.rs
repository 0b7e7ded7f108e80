mod cadence;
mod shaping;
mod summary;
