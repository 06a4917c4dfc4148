"""The command line: each command parses its options, calls one library function and renders the result.

Takes argv; hands on exit codes (0 pass, 1 fail, 2 bad input, 3 inconclusive) and what the console shows.
"""
