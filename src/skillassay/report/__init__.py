"""What people read: report.md, the charts, and the CI outputs (JUnit XML, job summary).

Takes a Benchmark, its comparison and gate result; hands on files for humans and CI.
"""
