# Golden-output fixture: a file that does not parse (ASC000).
import triton

def launch(x:
    pass
