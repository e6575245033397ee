#!/bin/bash
#CONDUIT_POST cp --every-attempt /scratch/out /project/out
srun ./model
