"""The realistic-language world: footage people search, in the words captioners and users use.

Each scene is one video of a kind people search (sports, doorbell and security cameras,
dashcams, cooking, meetings, wildlife). It has two parts that must stay apart:

- what the footage *shows and says* (``Shown``: the scene paragraphs and, for each event, the
  sentences a dense captioner would write about it, a little differently each time; and the
  lines spoken on the soundtrack). The simulator knows only this part, as a model knows what
  it sees.
- the *labels* (``Asked``: questions in users' words for every event, by kind, and hard
  negatives, by kind). Only the eval harness reads these; nothing standing in for a model does.

Scenes are split into a calibration part (tune weights and threshold here) and a held-out
part (report it); the split is fixed by ``CALIBRATION``.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from evals.synthetic.scene_model import NEGATIVE_KINDS, QUESTION_KINDS, Happening, Scene, _n, _q  # noqa: F401
from evals.synthetic.scenes_harsh import HARSH
from evals.synthetic.scenes_unseen import UNSEEN, UNSEEN_CALIBRATION

WORLD: list[Scene] = [
    Scene(
        name="doorbell_parcel", kind="doorbell", duration=48, backdrop=(120, 110, 95),
        scenes=["A doorbell camera looks down at a front porch with a doormat, a potted plant and a short path "
                "leading to the street.",
                "Fisheye view from a door camera over a small porch, a welcome mat and a garden path in daylight."],
        events=[
            Happening(start=3.0, end=9.5, captions=[
                "A delivery driver in a brown uniform walks up the path carrying a cardboard box.",
                "A courier approaches the front door holding a package.",
                "A man in a delivery uniform comes up to the porch with a parcel."],
                questions=_q("when does the courier arrive?", "a delivery guy comes to the house with a parcel",
                             "the delivery driver walking up")),
            Happening(start=11.0, end=16.0, captions=[
                "The driver sets the box down on the doormat and takes a photo of it with a phone.",
                "The courier places the package on the mat and photographs it.",
                "The delivery man leaves the parcel by the door and snaps a picture."],
                questions=_q("when is the package left at the door?", "the courier drops off the box on the doorstep",
                             "parcel put on the mat")),
            Happening(start=18.0, end=22.5, captions=[
                "The driver turns around and walks back down the path toward the street.",
                "The courier leaves, heading back to the road.",
                "The delivery man walks away from the porch."],
                questions=_q("when does the courier leave?", "the delivery driver goes away from the house",
                             "the driver walking off")),
            Happening(start=31.0, end=38.0, captions=[
                "A woman opens the front door, picks up the package and carries it inside.",
                "A woman steps out, lifts the box from the mat and takes it indoors.",
                "The homeowner, a woman, collects the parcel and brings it into the house."],
                questions=_q("when does the woman take the package in?",
                             "a lady collects the box and brings it indoors", "the package being picked up")),
        ],
        negatives=_n("the courier rings the doorbell and waits", "a woman carries a bicycle into the house",
                     "the woman brings a package out of the house", "a dog runs across the porch"),
    ),
    Scene(
        name="garage_intruder", kind="security", duration=70, backdrop=(60, 62, 70),
        scenes=["A security camera mounted on a garage wall shows a driveway at night, lit by a single floodlight, "
                "with a parked hatchback and a wheelie bin.",
                "Night-time CCTV view of a driveway with a small car and a bin under a floodlight."],
        events=[
            Happening(start=6.0, end=13.0, captions=[
                "A person in a dark hoodie walks onto the driveway from the left.",
                "Someone wearing a hooded top enters the driveway from the side.",
                "A hooded figure appears at the left edge and walks up the drive."],
                questions=_q("when does someone walk onto the driveway?", "a person in a hood enters the drive",
                             "the hooded figure appearing")),
            Happening(start=17.0, end=26.0, captions=[
                "The person tries the handle of the car's driver door.",
                "The hooded figure pulls at the door handle of the parked car.",
                "Someone attempts to open the car door."],
                questions=_q("when does the person try to open the car?", "somebody tests the vehicle's door handle",
                             "pulling the car door handle")),
            Happening(start=30.0, end=34.0, captions=[
                "The floodlight switches on and lights up the whole driveway.",
                "The security light comes on, brightening the drive.",
                "A motion light turns on over the driveway."],
                questions=_q("when does the light come on?", "the security lamp switches on",
                             "floodlight turning on")),
            Happening(start=36.0, end=42.0, captions=[
                "The person runs off down the driveway toward the street.",
                "The hooded figure flees, sprinting out of frame.",
                "Someone runs away from the car and out of view."],
                questions=_q("when does the intruder run away?", "the prowler flees the scene",
                             "the hooded person running")),
            Happening(start=58.0, end=66.0, captions=[
                "A fox trots across the driveway in front of the car.",
                "A small fox crosses the drive from right to left.",
                "An animal, a fox, walks past the parked car."],
                questions=_q("when does the fox cross the driveway?", "a wild animal passes in front of the car",
                             "the fox")),
        ],
        negatives=_n("the person climbs over the garden fence", "the person tries to open the garage door",
                     "the floodlight switches off", "a police car pulls into the driveway"),
    ),
    Scene(
        name="dashcam_junction", kind="dashcam", duration=64, backdrop=(110, 120, 130),
        scenes=["A dashcam looks through a windscreen at a two-lane city road with parked cars and a traffic "
                "light at a junction ahead.",
                "Front-facing car camera view of an urban street approaching a signalised intersection."],
        events=[
            Happening(start=4.0, end=10.0, captions=[
                "The car drives down the street behind a white van.",
                "The vehicle follows a white van along the road.",
                "Driving along the city street with a white van ahead."],
                questions=_q("when is the car following the van?", "our vehicle trails a white lorry",
                             "white van ahead")),
            Happening(start=13.0, end=16.5, captions=[
                "The traffic light ahead changes from green to red.",
                "The signal at the junction turns red.",
                "The light at the intersection goes from green to red."],
                questions=_q("when does the light turn red?", "the traffic signal switches to red",
                             "the light turning red")),
            Happening(start=18.0, end=24.0, captions=[
                "The car slows down and stops at the red light.",
                "The vehicle brakes and comes to a halt at the junction.",
                "The driver stops the car at the signal."],
                questions=_q("when does the car stop at the lights?", "the vehicle halts at the intersection",
                             "stopping at the junction")),
            Happening(start=27.0, end=33.0, captions=[
                "A cyclist crosses the road in front of the stopped car.",
                "A person on a bicycle rides across the junction ahead.",
                "A bike rider passes in front of the vehicle."],
                questions=_q("when does the cyclist cross in front of us?", "a bike rider goes across the road",
                             "the cyclist crossing")),
            Happening(start=40.0, end=46.0, captions=[
                "The light turns green and the car pulls away through the junction.",
                "The signal changes to green and the vehicle drives on.",
                "Green light; the car moves off across the intersection."],
                questions=_q("when does the car set off again?", "the vehicle starts moving once the signal is green",
                             "pulling away at the green light")),
        ],
        negatives=_n("the white van turns left at the junction", "a cyclist crosses behind the car",
                     "the car drives through the red light without stopping", "a pedestrian is hit by the car"),
    ),
    Scene(
        name="football_goal", kind="sports", duration=90, backdrop=(40, 130, 60),
        scenes=["A broadcast camera follows a football match in a floodlit stadium; one team plays in red shirts, "
                "the other in white.",
                "Televised soccer game between a red team and a white team on a bright green pitch."],
        events=[
            Happening(start=5.0, end=12.0, captions=[
                "A player in red dribbles past two defenders down the right wing.",
                "The red winger runs down the flank, beating two defenders.",
                "A red-shirted player carries the ball past two opponents on the right."],
                questions=_q("when does the winger beat two defenders?", "a red player gets past a couple of defenders",
                             "dribbling down the wing")),
            Happening(start=14.0, end=19.0, captions=[
                "He crosses the ball into the box and the striker heads it into the net.",
                "A cross from the right is headed into the goal by the striker.",
                "The striker scores with a header from a cross."],
                questions=_q("when is the goal scored?", "the forward nods the ball into the net", "the header")),
            Happening(start=21.0, end=30.0, captions=[
                "The red players run to the corner flag and celebrate together.",
                "The scoring team celebrates by the corner flag.",
                "Players in red hug each other in celebration near the corner."],
                questions=_q("when do the players celebrate?", "the team in red rejoices after scoring",
                             "goal celebration")),
            Happening(start=47.0, end=55.0, captions=[
                "The referee shows a yellow card to a player in white.",
                "A white player is booked by the referee.",
                "The ref holds up a yellow card at a defender in white."],
                questions=_q("when does the referee give a yellow card?", "the official books a white player",
                             "the yellow card")),
            Happening(start=66.0, end=74.0, captions=[
                "The goalkeeper in white dives to his left and saves a low shot.",
                "A low shot is stopped by the diving white goalkeeper.",
                "The keeper makes a diving save to keep the ball out."],
                questions=_q("when does the goalkeeper make a save?", "the keeper stops a shot with a dive",
                             "the diving save")),
        ],
        negatives=_n("the winger is tackled and falls to the ground", "the striker heads the ball over the bar",
                     "the team in white scores a goal", "a fan runs onto the pitch"),
    ),
    Scene(
        name="kitchen_omelette", kind="cooking", duration=56, backdrop=(200, 190, 170),
        scenes=["Overhead view of a kitchen counter with a gas hob, a frying pan, a bowl of eggs and a chopping "
                "board with herbs.",
                "A cooking video shot from above: a stovetop, a pan, eggs in a bowl and chopped herbs."],
        events=[
            Happening(start=2.0, end=8.0, captions=[
                "A cook cracks three eggs into a glass bowl.",
                "Hands break eggs one by one into a bowl.",
                "Someone cracks eggs into a mixing bowl."],
                questions=_q("when are the eggs cracked?", "the chef breaks the eggs into a bowl",
                             "cracking eggs")),
            Happening(start=10.0, end=16.0, captions=[
                "The eggs are whisked with a fork until frothy.",
                "The cook beats the eggs with a fork.",
                "A fork whisks the eggs in the bowl."],
                questions=_q("when does the cook whisk the eggs?", "someone beats the eggs", "whisking")),
            Happening(start=19.0, end=23.0, captions=[
                "A knob of butter is dropped into the hot pan and melts.",
                "Butter goes into the frying pan and sizzles.",
                "The cook melts butter in the pan."],
                questions=_q("when does the butter go in the pan?", "the chef adds butter to the skillet",
                             "melting butter")),
            Happening(start=25.0, end=33.0, captions=[
                "The beaten eggs are poured into the pan and spread out.",
                "The cook pours the egg mixture into the frying pan.",
                "Egg is poured into the hot pan."],
                questions=_q("when are the eggs poured into the pan?", "the whisked egg goes into the skillet",
                             "pouring the eggs")),
            Happening(start=40.0, end=47.0, captions=[
                "The omelette is folded in half with a spatula and slid onto a plate.",
                "Using a spatula, the cook folds the omelette and plates it.",
                "The omelette gets folded over and served onto a white plate."],
                questions=_q("when is the omelette folded?", "the cook flips the omelette over onto itself",
                             "folding the omelette")),
        ],
        negatives=_n("the cook chops an onion", "the cook cracks a walnut",
                     "the omelette is unfolded and spread flat", "the pan catches fire"),
    ),
    Scene(
        name="meeting_budget", kind="meeting", duration=75, backdrop=(180, 180, 175),
        scenes=["A video call recording of a team meeting: a presenter shares slides while four participants "
                "watch in small tiles.",
                "Screen recording of an online meeting with a slide deck and a grid of attendees' webcams."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "The presenter shares her screen, showing a title slide.",
                "A slide deck appears as the host starts screen sharing.",
                "Screen sharing begins with the first slide of a presentation."],
                questions=_q("when does she start sharing her screen?", "the host begins presenting her slides",
                             "screen share starting")),
            Happening(start=12.0, end=18.0, said="Good news everyone, the budget for next year has been approved.",
                      questions=_q("when does she say the budget was approved?",
                                   "the presenter announces the budget got signed off",
                                   "budget approved")),
            Happening(start=24.0, end=31.0, captions=[
                "The slide changes to a bar chart of quarterly sales.",
                "A chart showing sales by quarter is displayed.",
                "The presenter moves to a slide with a bar graph of quarterly revenue."],
                questions=_q("when is the sales chart shown?", "a graph of revenue per quarter appears",
                             "the bar chart")),
            Happening(start=36.0, end=42.0, said="We will hire two new engineers in March.",
                      questions=_q("when does she mention hiring new engineers?",
                                   "the speaker says two engineers will be recruited",
                                   "hiring engineers")),
            Happening(start=52.0, end=60.0, captions=[
                "A participant in a blue shirt raises his hand.",
                "One of the attendees lifts his hand to ask a question.",
                "A man in a blue shirt puts his hand up in his video tile."],
                questions=_q("when does someone raise their hand?", "an attendee puts his hand up",
                             "hand raised")),
        ],
        negatives=_n("the presenter stops sharing her screen", "a participant shares his screen",
                     "the presenter says the budget was rejected", "the cat walks across the keyboard"),
    ),
    Scene(
        name="wildlife_bear", kind="wildlife", duration=60, backdrop=(70, 100, 60),
        scenes=["A trail camera faces a forest clearing beside a shallow river, with rocks and fallen logs.",
                "Wildlife camera footage of a riverbank in a pine forest on an overcast day."],
        events=[
            Happening(start=4.0, end=12.0, captions=[
                "A brown bear walks out of the trees toward the river.",
                "A large bear emerges from the forest and heads for the water.",
                "A grizzly comes out of the woods and walks to the riverbank."],
                questions=_q("when does the bear come out of the forest?", "a grizzly emerges from the woods",
                             "the bear appearing")),
            Happening(start=16.0, end=26.0, captions=[
                "The bear wades into the river and catches a fish in its mouth.",
                "Standing in the water, the bear grabs a salmon with its jaws.",
                "The bear catches a fish in the shallow river."],
                questions=_q("when does the bear catch a fish?", "the grizzly grabs a salmon from the water",
                             "catching a fish")),
            Happening(start=30.0, end=36.0, captions=[
                "Two ducks fly low over the river from right to left.",
                "A pair of ducks flies across the water.",
                "Two birds skim over the river."],
                questions=_q("when do the ducks fly past?", "a couple of birds fly over the water",
                             "ducks flying")),
            Happening(start=42.0, end=52.0, captions=[
                "The bear climbs out of the river and walks back into the forest.",
                "The bear leaves the water and disappears into the trees.",
                "The grizzly heads back into the woods."],
                questions=_q("when does the bear leave?", "the grizzly goes back into the trees",
                             "bear walking off")),
        ],
        negatives=_n("the bear stands up on its hind legs and roars", "the bear catches a duck",
                     "the bear drops a fish back into the water", "a deer drinks from the river"),
    ),
    Scene(
        name="basketball_dunk", kind="sports", duration=50, backdrop=(190, 140, 80),
        scenes=["An indoor basketball game on a polished wooden court, one team in blue and one in yellow, a "
                "crowd in the stands.",
                "Broadcast view of a basketball court with players in blue and yellow jerseys."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "A player in blue steals the ball near half court.",
                "The blue team intercepts a pass at midcourt.",
                "A blue guard takes the ball away from a yellow player."],
                questions=_q("when is the ball stolen?", "a blue player intercepts the pass", "the steal")),
            Happening(start=10.0, end=15.0, captions=[
                "He runs the length of the court and dunks the ball with both hands.",
                "The player drives to the basket and slams it home.",
                "A two-handed slam dunk on the fast break."],
                questions=_q("when does he dunk?", "the guard slams the ball through the hoop", "the slam dunk")),
            Happening(start=22.0, end=29.0, captions=[
                "A yellow player shoots a three-pointer from the corner and misses.",
                "A long shot from the corner by the yellow team bounces off the rim.",
                "The three-point attempt from the corner misses."],
                questions=_q("when does the three-pointer miss?", "a long-range shot from the corner bounces out",
                             "missed three")),
            Happening(start=34.0, end=41.0, captions=[
                "The coach in a grey suit calls a timeout from the sideline.",
                "On the sideline, the coach signals for a timeout.",
                "The team's coach stops play with a timeout call."],
                questions=_q("when is a timeout called?", "the coach asks for a break in play", "the timeout")),
        ],
        negatives=_n("the blue player misses a free throw", "the player dunks a volleyball",
                     "the yellow three-pointer goes in", "the scoreboard falls onto the court"),
    ),
    Scene(
        name="porch_package_theft", kind="security", duration=44, backdrop=(130, 120, 110),
        scenes=["A porch camera shows a front step with two parcels on it, a bench and a hedge along the pavement.",
                "Security footage of a house entrance with packages waiting on the step."],
        events=[
            Happening(start=4.0, end=10.0, captions=[
                "A man in a grey jacket walks along the pavement and looks at the porch.",
                "Someone in a grey coat passes by and glances at the parcels.",
                "A passer-by in a grey jacket eyes the front step."],
                questions=_q("when does the man look at the porch?", "a passer-by eyes the packages",
                             "man looking at the parcels")),
            Happening(start=14.0, end=20.0, captions=[
                "The man walks up the steps and picks up both parcels.",
                "The man in grey grabs the two packages from the step.",
                "Someone takes the boxes off the porch."],
                questions=_q("when are the packages stolen?", "a thief grabs the parcels off the step",
                             "taking the boxes")),
            Happening(start=22.0, end=27.0, captions=[
                "He hurries away down the street carrying the parcels.",
                "The man runs off with the packages under his arm.",
                "Carrying the boxes, the man leaves quickly."],
                questions=_q("when does the thief get away?", "the man hurries off with the stolen boxes",
                             "running off with the packages")),
            Happening(start=34.0, end=40.0, captions=[
                "A neighbour comes out of the house next door and looks around.",
                "The woman next door steps out and looks up the street.",
                "A neighbour appears at her door and glances around."],
                questions=_q("when does the neighbour come out?", "the lady next door steps outside",
                             "neighbour appearing")),
        ],
        negatives=_n("the man rings the doorbell", "the man steals the bench",
                     "the man puts the parcels back on the step", "a delivery van stops outside"),
    ),
    Scene(
        name="dashcam_motorway", kind="dashcam", duration=80, backdrop=(150, 160, 170),
        scenes=["Dashcam footage on a three-lane motorway in light rain, wipers moving, lorries in the inside lane.",
                "A car camera on a wet highway with trucks on the left and an overhead sign gantry ahead."],
        events=[
            Happening(start=6.0, end=13.0, captions=[
                "A silver car overtakes on the right and cuts in sharply ahead.",
                "A grey saloon passes and swerves into the lane in front.",
                "Another car overtakes and pulls in close in front of the camera car."],
                questions=_q("when does a car cut us up?", "a vehicle overtakes and swerves in front", "the cut-in")),
            Happening(start=15.0, end=20.0, captions=[
                "The camera car brakes hard and its speed drops.",
                "The driver slams on the brakes.",
                "Hard braking as the gap closes."],
                questions=_q("when do we brake hard?", "the driver suddenly slows down", "emergency braking")),
            Happening(start=33.0, end=40.0, captions=[
                "The car passes under an overhead gantry with a sign for the airport.",
                "An overhead sign showing the airport exit goes by.",
                "The vehicle drives beneath a gantry signposting the airport."],
                questions=_q("when do we pass the airport sign?", "we drive under the sign for the airport",
                             "airport sign")),
            Happening(start=52.0, end=60.0, captions=[
                "The car indicates and moves into the left lane behind a lorry.",
                "The driver changes lanes to the left, behind a truck.",
                "The vehicle signals and pulls into the inside lane."],
                questions=_q("when does the car change lanes?", "we move over into the left lane",
                             "lane change")),
            Happening(start=66.0, end=74.0, captions=[
                "The car takes the exit slip road off the motorway.",
                "The vehicle leaves the highway via an off-ramp.",
                "Turning off onto the exit ramp."],
                questions=_q("when do we leave the motorway?", "the car takes the off-ramp", "taking the exit")),
        ],
        negatives=_n("the silver car brakes suddenly in front", "the car passes under a sign for the harbour",
                     "the car joins the motorway from a slip road", "a deer runs across the road"),
    ),
    Scene(
        name="bakery_bread", kind="cooking", duration=52, backdrop=(210, 180, 140),
        scenes=["A home baker works at a floured wooden table beside an oven, with a mixing bowl and a loaf tin.",
                "A baking tutorial filmed at a wooden counter dusted with flour next to an oven."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "The baker kneads a ball of dough on the floured table.",
                "Hands knead and fold the bread dough.",
                "Someone works the dough by pushing and folding it."],
                questions=_q("when is the dough kneaded?", "the baker works the bread dough by hand", "kneading")),
            Happening(start=13.0, end=18.0, captions=[
                "The dough is shaped into a loaf and placed in a tin.",
                "The baker forms a loaf and puts it into the loaf tin.",
                "The shaped dough goes into a baking tin."],
                questions=_q("when does the dough go into the tin?", "the baker puts the shaped loaf in the pan",
                             "dough into the tin")),
            Happening(start=21.0, end=26.0, said="Now let it rise for about an hour in a warm place.",
                      questions=_q("when does she say how long to let it rise?",
                                   "the baker explains the dough should prove for an hour",
                                   "rising time")),
            Happening(start=30.0, end=36.0, captions=[
                "The baker opens the oven and slides the tin inside.",
                "The tin is put into the hot oven.",
                "The loaf goes into the oven to bake."],
                questions=_q("when does the bread go in the oven?", "the baker puts the loaf into the oven to bake",
                             "into the oven")),
            Happening(start=42.0, end=49.0, captions=[
                "A golden baked loaf is turned out of the tin onto a cooling rack.",
                "The finished bread is tipped out onto a wire rack.",
                "The baked loaf comes out of its tin onto a rack."],
                questions=_q("when is the loaf taken out of the tin?", "the baked bread is tipped onto the rack",
                             "the finished loaf")),
        ],
        negatives=_n("the baker slices the loaf", "the baker kneads a ball of clay",
                     "the baker squashes the loaf back into a ball of dough", "the baker spreads jam on toast"),
    ),
    Scene(
        name="lecture_volcano", kind="talk", duration=66, backdrop=(90, 80, 100),
        scenes=["A lecture hall: a speaker at a podium beside a large screen showing slides about volcanoes.",
                "A recorded talk with a presenter next to a projection screen in a dim auditorium."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "The speaker walks onto the stage and stands at the podium.",
                "A presenter comes up to the lectern.",
                "The lecturer takes her place behind the podium."],
                questions=_q("when does the speaker come on stage?", "the lecturer walks up to the lectern",
                             "speaker arriving")),
            Happening(start=14.0, end=21.0, captions=[
                "The screen shows a photograph of an erupting volcano.",
                "A slide with a picture of a volcano erupting appears.",
                "An image of an erupting volcano fills the screen."],
                questions=_q("when is the eruption photo shown?", "a picture of a volcano blowing up appears",
                             "volcano photo")),
            Happening(start=25.0, end=31.0, said="Most eruptions give warning signs days in advance.",
                      questions=_q("when does she say eruptions give warning signs?",
                                   "the speaker explains volcanoes show signals before they erupt",
                                   "warning signs")),
            Happening(start=38.0, end=45.0, captions=[
                "The speaker points at a diagram of magma chambers with a laser pointer.",
                "With a laser pointer, the presenter highlights a diagram of the magma chamber.",
                "The lecturer indicates part of a cross-section diagram with a red laser dot."],
                questions=_q("when does she point at the diagram?", "the presenter highlights the magma chart",
                             "laser pointer")),
            Happening(start=52.0, end=60.0, captions=[
                "The audience applauds as the speaker bows.",
                "People in the audience clap at the end of the talk.",
                "Applause from the crowd while the lecturer nods."],
                questions=_q("when does the audience clap?", "the crowd gives a round of applause", "the applause")),
        ],
        negatives=_n("the speaker drinks a glass of water", "the screen shows a photograph of a glacier",
                     "the audience boos the speaker", "the fire alarm goes off"),
    ),
    Scene(
        name="garden_birds", kind="wildlife", duration=46, backdrop=(90, 140, 80),
        scenes=["A garden camera points at a bird feeder hanging from an apple tree, with a lawn behind it.",
                "Backyard footage of a hanging bird feeder in a tree above a grassy lawn."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "A robin lands on the feeder and pecks at the seeds.",
                "A small red-breasted bird perches on the feeder and eats.",
                "A robin arrives and feeds on seed."],
                questions=_q("when does the robin land on the feeder?", "a little red-breasted bird perches to eat",
                             "robin feeding")),
            Happening(start=13.0, end=20.0, captions=[
                "A grey squirrel climbs down the tree and onto the feeder.",
                "A squirrel clambers onto the bird feeder.",
                "A squirrel scrambles down the trunk and hangs on the feeder."],
                questions=_q("when does the squirrel get on the feeder?", "a squirrel clambers onto the feeder",
                             "the squirrel")),
            Happening(start=22.0, end=27.0, captions=[
                "The squirrel knocks the feeder and seeds spill onto the grass.",
                "Seed spills onto the lawn as the squirrel shakes the feeder.",
                "The feeder swings and scatters seed on the ground."],
                questions=_q("when does the seed spill?", "grain falls onto the lawn", "seed spilling")),
            Happening(start=33.0, end=40.0, captions=[
                "A cat walks across the lawn and the squirrel runs up the tree.",
                "A cat appears on the grass and the squirrel scurries away up the trunk.",
                "The squirrel flees up the tree as a cat crosses the lawn."],
                questions=_q("when does the cat scare the squirrel away?", "a cat crosses the grass and the squirrel flees",
                             "cat on the lawn")),
        ],
        negatives=_n("the robin bathes in a puddle", "a squirrel climbs onto the garden fence",
                     "seed is poured into the feeder", "a hedgehog crosses the lawn"),
    ),
    Scene(
        name="tennis_rally", kind="sports", duration=54, backdrop=(60, 110, 170),
        scenes=["A tennis match on a blue hard court seen from behind the baseline, umpire's chair at the net.",
                "Broadcast of a tennis match on a blue court with two players and a chair umpire."],
        events=[
            Happening(start=3.0, end=8.0, captions=[
                "The player in white serves an ace down the middle.",
                "A fast serve from the player in white goes untouched.",
                "The white-shirted player hits an unreturnable serve."],
                questions=_q("when is the ace served?", "the server hits an unreturnable serve", "the ace")),
            Happening(start=12.0, end=24.0, captions=[
                "The two players trade long baseline shots in a rally.",
                "A long rally from the back of the court.",
                "Both players exchange groundstrokes from the baseline."],
                questions=_q("when is the long rally?", "the players hit the ball back and forth", "baseline rally")),
            Happening(start=26.0, end=31.0, captions=[
                "The player in black hits the ball into the net and drops her racket.",
                "A shot from the player in black clips the net and she throws down her racket.",
                "The point ends when the black-shirted player nets the ball and drops her racquet."],
                questions=_q("when does she hit the ball into the net?", "the player in black nets her shot",
                             "ball into the net")),
            Happening(start=38.0, end=46.0, captions=[
                "The players shake hands at the net.",
                "At the net, the two players shake hands.",
                "Handshake between the players at the net."],
                questions=_q("when do the players shake hands?", "the two players greet each other at the net",
                             "the handshake")),
        ],
        negatives=_n("the player in white hits a double fault", "the player in black throws her water bottle",
                     "the player in black picks her racket up off the court", "it starts raining on the court"),
    ),
]

# Six more scenes of new kinds, in words of their own, all held out; then ten of kinds neither has, asked in
# words their captions do not use, four of them calibrated on.
WORLD += HARSH
WORLD += UNSEEN

# Eleven scenes to calibrate on, the rest held out; every kind has a scene in each part where it can.
CALIBRATION = ("doorbell_parcel", "dashcam_junction", "football_goal", "kitchen_omelette", "meeting_budget",
               "wildlife_bear", "lecture_volcano") + UNSEEN_CALIBRATION


def scenes(part: str = "all") -> list[Scene]:
    """``calibration``, ``heldout`` or ``all``."""
    if part == "all":
        return list(WORLD)
    chosen = [s for s in WORLD if (s.name in CALIBRATION) == (part == "calibration")]
    if part not in ("calibration", "heldout"):
        raise ValueError(f"unknown part {part!r}")
    return chosen


def scene_by_number(number: int) -> Scene | None:
    """Scenes are numbered from 1 in the order of ``WORLD`` (the number the footage carries)."""
    return WORLD[number - 1] if 1 <= number <= len(WORLD) else None


class Shown(BaseModel):
    """What a scene's footage shows: all a model watching it could know, and no labels."""

    paragraphs: list[str]
    captions: dict[int, list[str]] = Field(description="Event number on screen (from 1) -> captioner wordings.")


def shown(number: int) -> Shown | None:
    """The visible part of scene ``number``: the only view of the world the simulator gets."""
    scene = scene_by_number(number)
    if scene is None:
        return None
    return Shown(paragraphs=scene.scenes,
                 captions={n + 1: e.captions for n, e in enumerate(scene.events) if not e.spoken})
