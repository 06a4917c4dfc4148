"""skillassay: does this Agent Skill really help, by how much, and how sure are we?"""

__version__ = "0.1.0"
