mod cadence;
mod fragments;
mod on_demand;
mod resumed;
mod shaping;
mod summary;
