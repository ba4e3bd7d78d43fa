"""Plans on the server: capacity, drain and scale-up questions (schedviz/planning) run on the worker,
stored with their answer, and each opened as a replay of the snapshot it replayed."""
