mod cadence;
mod fragments;
mod resumed;
mod shaping;
mod summary;
