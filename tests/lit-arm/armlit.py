"""lit test format of the Arm testbed (tests/lit-arm/lit.cfg.py), in a module of its own
so that lit's worker processes can unpickle it."""
import os

import lit.formats
import lit.Test


class ArmShTest(lit.formats.ShTest):
    """ShTest that reports the tests named in `unsupported` (file name -> reason) as
    UNSUPPORTED, with the reason, instead of running them."""

    def __init__(self, unsupported, execute_external=False):
        super().__init__(execute_external)
        self.unsupported = dict(unsupported)

    def execute(self, test, litConfig):
        why = self.unsupported.get(os.path.basename(test.getSourcePath()))
        if why:
            return lit.Test.Result(lit.Test.UNSUPPORTED, "unsupported on the arm64 VM: " + why)
        return super().execute(test, litConfig)
