mod shaping;
