"""Training: the loop and what it calls (checkpoints, precision, schedules, guards).

Importing ``torchwise.train`` loads torch; ``import torchwise`` alone does not import this package.
"""
