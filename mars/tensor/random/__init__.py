"""mt.random: placeholder until it lands."""
