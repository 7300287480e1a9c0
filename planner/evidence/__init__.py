"""What real engines said: their startup logs read into numbers, and the measured accuracy of
the planner against published runs (the shipped summary). Imports inputs and model only."""
