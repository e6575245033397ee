#!/bin/bash
#CONDUIT_PRE cp /archive/a /scratch/b
#CONDUIT_POST cp "/scratch/unterminated /archive/
srun hostname
