"""Can-fail data: tests/breakers/<page>.py makes each claim of that page fail (test_claims.py)."""
