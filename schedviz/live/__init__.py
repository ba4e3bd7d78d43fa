"""Live cluster mode: watch clusters, replay each scheduling decision, compare with reality."""
