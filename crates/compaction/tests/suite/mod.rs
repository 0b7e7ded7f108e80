mod cadence;
mod fragments;
mod shaping;
mod summary;
