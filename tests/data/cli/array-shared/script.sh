#!/bin/bash
#SBATCH --array=0-9
#CONDUIT_PRE cp -r /archive/reference /scratch/%u/ref-%A/
#CONDUIT_PRE cp /archive/inputs/%a.nc /scratch/%u/in-%A-%a.nc
#CONDUIT_PRE cp --every-attempt /archive/mesh /scratch/%u/mesh-%A
#CONDUIT_POST cp /scratch/%u/out-%a /archive/out/
./run
