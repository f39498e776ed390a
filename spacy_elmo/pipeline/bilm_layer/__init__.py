"""The biLM as a thinc layer (`thinc_bilm.py`) and its parts: how docs are cut into pieces
(`segment.py`), which tokens are read (`read_tokens.py`; batches: `elmo/nn/batch_plan.py`), the torch module and
its bytes (`bilm_holder.py`), and what layers share in one process (`process_state.py`)."""
