"""cmax tests: one folder per package of cmax, shared helpers at the top."""
