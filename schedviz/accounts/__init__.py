"""Users, teams, API tokens and the ownership rule every endpoint applies."""
