"""Model sizes are defined once (options.PRESETS): the shipped pretraining configs are generated from them."""

import pytest

from spacy_elmo.nn.options import preset
from spacy_elmo.pretrain import load_config
from spacy_elmo.pretrain.presets import preset_config, preset_names
from tests.support.paths import CONFIGS


@pytest.mark.parametrize("name", ["tiny", "small", "medium", "original"])
def test_shipped_pretraining_configs_are_the_generated_ones(name):
    assert name in preset_names()
    assert (CONFIGS / f"pretrain_{name}.cfg").read_text() == preset_config(name), (
        f"regenerate: python -m spacy_elmo init-config {name} configs/pretrain_{name}.cfg --overwrite"
    )
    config = load_config(CONFIGS / f"pretrain_{name}.cfg", {"paths.train": "x"})
    assert config.options.to_dict()["lstm"] == preset(name).to_dict()["lstm"]


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_every_setting_is_in_the_generated_config_with_the_declared_default(name):
    from spacy_elmo.pretrain.config import LoggingSettings, TrainingSettings
    from spacy_elmo.pretrain.presets import LOGGING, TRAINING

    config = load_config(preset_config(name), from_string=True)
    for settings, declared, own in (
        (config.training, TrainingSettings, TRAINING),
        (config.logging, LoggingSettings, LOGGING),
    ):
        for key, field in declared.model_fields.items():
            assert getattr(settings, key) == own.get(name, {}).get(key, field.default), key
