require("conduit_bb")
