"""Model sizes are defined once (options.PRESETS): the pretraining configs are generated from them, by
`init-config` only (the repository keeps no copy to drift)."""

import pytest

from spacy_elmo.elmo.nn.options import preset
from spacy_elmo.elmo.pretrain import load_config
from spacy_elmo.elmo.pretrain.presets import preset_config, preset_names


@pytest.mark.parametrize("name", ["tiny", "small", "medium", "original"])
def test_a_generated_pretraining_config_has_its_presets_sizes(name):
    assert name in preset_names()
    config = load_config(preset_config(name), {"paths.train": "x"}, from_string=True)
    assert config.options.to_dict()["lstm"] == preset(name).to_dict()["lstm"]
    assert "configs/" not in preset_config(name)  # its header names the file init-config writes


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_every_setting_is_in_the_generated_config_with_the_declared_default(name):
    from spacy_elmo.elmo.pretrain.config import LoggingSettings, TrainingSettings
    from spacy_elmo.elmo.pretrain.presets import LOGGING, TRAINING

    config = load_config(preset_config(name), from_string=True)
    for settings, declared, own in (
        (config.training, TrainingSettings, TRAINING),
        (config.logging, LoggingSettings, LOGGING),
    ):
        for key, field in declared.model_fields.items():
            assert getattr(settings, key) == own.get(name, {}).get(key, field.default), key
