"""The reference for the speed benchmark: the seed's ViT trained with a plain `model.fit`.

Same protocol as `python -m vitcore run` with the defaults (patch 7, 4,000 rows, 15 epochs,
batch 64, validation on the 5,000 held-out rows each epoch, the 10k test at the end), same data
and same model builder, but none of vitcore's speed settings. Run as a whole process:
    /usr/bin/time -f %e python -m vitcore.run.plain_fit [SEED]      # SEED: default 0, as `vitcore run --seed`
It lives in the package (vitcore.run.bench runs it) so an installed vitcore needs nothing outside itself;
nothing imports it.
"""

import json
import sys
import time

import keras

from vitcore.config.run import RunConfig
from vitcore.data.fashion import load_split
from vitcore.data.patches import model_inputs
from vitcore.model.build import build_model


def main() -> None:
    start = time.perf_counter()
    cfg = RunConfig(seed=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    data = load_split(cfg.train_rows, cfg.seed)
    keras.utils.set_random_seed(cfg.seed)
    model = build_model(cfg)
    model.compile(optimizer=keras.optimizers.Adam(cfg.lr), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(model_inputs(cfg, data.x_train), data.y_train, batch_size=cfg.batch_size, epochs=cfg.epochs,
                        validation_data=(model_inputs(cfg, data.x_val), data.y_val), verbose=0)
    test_loss, test_accuracy = model.evaluate(model_inputs(cfg, data.x_test), data.y_test, verbose=0)
    print(json.dumps({"best_val_accuracy": max(history.history["val_accuracy"]),
                      "final_train_accuracy": history.history["accuracy"][-1],
                      "test_accuracy": test_accuracy, "in_process_seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
