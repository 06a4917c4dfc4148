"""The commands' procedures: read an iteration's files, call the pure stages (grade, analyze,
report) and write the results. The I/O edge between the CLI/engine and the pure stages."""
