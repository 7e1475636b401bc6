"""Training data: ``rows.py`` turns the shared problem sources (problems/domains.py) into TRL rows
``{prompt, answer | tests, id}`` with the prompt the evals use."""
