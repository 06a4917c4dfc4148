"""The review viewer: one iteration's runs, grades and benchmark, served on 127.0.0.1 or
written as one self-contained HTML file. Everything an agent wrote is treated as hostile."""
