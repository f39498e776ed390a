"""ELMoForManyLangs (HIT-SCIR): its model (model.py), its files (reader.py) and its character ids
(chars.py), in one place."""
