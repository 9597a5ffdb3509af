"""Ten scenes of kinds neither earlier part has, asked the way people who did not write the captions ask.

A pool, a supermarket till, a gym, a railway platform, a skate park, an airport's baggage reclaim, a
sheep farm, a wedding reception, a boxing ring and a multi-storey car park. What sets them apart is the
users' side: each paraphrase says its event in other words than any of the event's captions — a phrasal
verb or an idiom for the act ("hits the deck", "legs it", "rings up"), slang or a near word for the
things ("motors", "the fold", "bubbly") — so that about a fifth of its words, at most, are a caption's.
Such questions are where independent worlds found the verifier weakest.

Four of them join the calibration part, so the fit meets wording of this kind too; six are held out.
No run of four words with two content words in common with the earlier scenes (a test checks), and the
near misses stay as harsh as before: the same actor doing the next thing, the same act on a
neighbouring thing, the reverse, and something plausible that never happens.
"""

from __future__ import annotations

from evals.synthetic.scene_model import Happening, Scene, _n, _q

UNSEEN_CALIBRATION = ("swimming_pool", "supermarket_checkout", "gym_weights", "train_platform")

UNSEEN: list[Scene] = [
    Scene(
        name="swimming_pool", kind="leisure", duration=52, backdrop=(90, 150, 170),
        scenes=["An overhead camera at a public swimming pool: lanes marked with ropes, a lifeguard chair and a "
                "diving board.",
                "Leisure centre footage of an indoor pool with swimmers in lanes and a high chair by the edge."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "A boy runs along the wet poolside and slips over.",
                "A child skids on the tiles beside the pool and lands on his back.",
                "Running by the water, a young boy loses his footing and falls."],
                questions=_q("when does the boy slip by the pool?", "a kid takes a tumble on the deck",
                             "boy slipping")),
            Happening(start=13.0, end=20.0, captions=[
                "The lifeguard blows a whistle and points at the boy.",
                "From the high chair, the lifeguard whistles and waves a warning.",
                "A lifeguard in red signals with her whistle toward the child."],
                questions=_q("when does the lifeguard blow the whistle?",
                             "the pool attendant gives a sharp blast and gestures", "whistle warning")),
            Happening(start=24.0, end=31.0, captions=[
                "A woman dives off the springboard into the deep end.",
                "A swimmer jumps head first from the diving board.",
                "Off the board, a woman plunges into the water."],
                questions=_q("when does the woman dive in?", "a lady leaps off the platform and splashes down",
                             "diving in")),
            Happening(start=35.0, end=43.0, captions=[
                "Two swimmers race each other down the lane doing front crawl.",
                "A pair of swimmers sprint the length of the pool side by side.",
                "In the middle lane, two people swim freestyle as fast as they can."],
                questions=_q("when do the two swimmers race?", "a couple of bathers go all out against one another",
                             "swimming race")),
            Happening(start=46.0, end=51.0, captions=[
                "The lifeguard climbs down from her chair and walks away.",
                "The lifeguard leaves her high seat and heads off along the side.",
                "Stepping down from the tall chair, the lifeguard walks off."],
                questions=_q("when does the lifeguard leave her chair?",
                             "the pool attendant gets down from her perch and wanders off", "lifeguard stepping down")),
        ],
        negatives=_n("the boy dives off the springboard", "the lifeguard blows up a beach ball",
                     "the lifeguard climbs up into her chair", "a swimmer is pulled out of the water unconscious"),
    ),
    Scene(
        name="supermarket_checkout", kind="retail", duration=50, backdrop=(170, 170, 150),
        scenes=["A ceiling camera over a supermarket checkout: a conveyor belt, a till, a card reader and a queue "
                "of shoppers.",
                "Store CCTV of a checkout lane with a cashier and customers unloading baskets."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "A customer unloads a basket of groceries onto the conveyor belt.",
                "A shopper empties her basket onto the moving belt.",
                "Food items are taken out of a basket and placed on the belt."],
                questions=_q("when does the shopper unload her basket?", "a lady puts her shopping down by the till",
                             "basket unloaded")),
            Happening(start=13.0, end=19.0, captions=[
                "A bottle of milk falls off the belt and bursts on the floor.",
                "A carton of milk drops from the counter and splashes across the tiles.",
                "Milk spills everywhere when a bottle slips off the conveyor."],
                questions=_q("when does the milk fall?", "the pint hits the deck and goes everywhere", "milk spill")),
            Happening(start=23.0, end=30.0, captions=[
                "The cashier scans each item and bags it.",
                "Items are passed over the scanner by the cashier and packed.",
                "The checkout assistant beeps the groceries through."],
                questions=_q("when does the cashier scan the shopping?", "the till worker rings up the goods",
                             "scanning items")),
            Happening(start=34.0, end=40.0, captions=[
                "The shopper taps her card on the reader to pay.",
                "The customer pays by holding a bank card to the terminal.",
                "Payment is made with a contactless card at the till."],
                questions=_q("when does the customer pay?", "the woman settles up with plastic", "card payment")),
            Happening(start=43.0, end=48.0, captions=[
                "A man at the back of the queue gives up and walks out.",
                "Tired of waiting, a man leaves the line and makes for the exit.",
                "The last man in the queue abandons his trolley and goes."],
                questions=_q("when does the man leave the queue?", "a guy gets fed up with waiting and storms off",
                             "man walking out")),
        ],
        negatives=_n("the cashier mops up the spilt milk", "a jar of honey falls off the belt and smashes",
                     "a man joins the back of the queue", "a shoplifter is stopped by a security guard"),
    ),
    Scene(
        name="gym_weights", kind="fitness", duration=56, backdrop=(120, 120, 130),
        scenes=["A camera in the corner of a gym: a squat rack, a bench press, dumbbells on a rack and mirrors.",
                "Fitness centre footage of a weights area with benches, barbells and a row of treadmills."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "A man lifts a heavy barbell off the rack and squats with it.",
                "With a loaded bar on his shoulders, a man bends his knees and stands back up.",
                "A lifter does a set of squats in the rack."],
                questions=_q("when does the man squat?", "a guy sinks low with the weight across his back and rises",
                             "barbell squat")),
            Happening(start=14.0, end=20.0, captions=[
                "A woman drops a dumbbell and it rolls across the floor.",
                "A dumbbell slips from a woman's hand and rolls away.",
                "The weight falls out of her grip and trundles over the mats."],
                questions=_q("when does she drop the dumbbell?", "a lady loses hold of her hand weight",
                             "dumbbell dropped")),
            Happening(start=24.0, end=31.0, captions=[
                "A man on the bench press struggles and his friend helps lift the bar.",
                "A spotter grabs the bar as the man pressing it runs out of strength.",
                "His training partner helps the lifter rack the bar when he fails a rep."],
                questions=_q("when does the spotter help with the bar?",
                             "a buddy steps in to save the guy stuck under the weight", "spotter helping")),
            Happening(start=35.0, end=42.0, captions=[
                "A woman runs on a treadmill at a fast pace.",
                "On the treadmill, a woman breaks into a sprint.",
                "A runner speeds up on the running machine."],
                questions=_q("when does the woman sprint on the treadmill?", "a lady picks up the pace on the mill",
                             "treadmill sprint")),
            Happening(start=46.0, end=53.0, captions=[
                "The man wipes down the bench with a towel and walks off.",
                "After his set he cleans the bench with a cloth and leaves.",
                "A lifter gives the bench a wipe and heads out."],
                questions=_q("when does the man clean the bench?", "a guy tidies up the seat after himself",
                             "bench wiped")),
        ],
        negatives=_n("the man drops the barbell on the floor", "a woman drops a kettlebell",
                     "the woman slows to a walk on the treadmill", "a man does pull-ups on a bar"),
    ),
    Scene(
        name="train_platform", kind="travel", duration=58, backdrop=(110, 115, 125),
        scenes=["A station camera looks along a train platform: a yellow line near the edge, benches and a "
                "departure board.",
                "Platform CCTV at a railway station with waiting passengers and tracks on the left."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "A train pulls into the station and stops at the platform.",
                "The train arrives and halts beside the waiting people.",
                "A commuter train slows down and draws up alongside the platform."],
                questions=_q("when does the train arrive?", "the service rolls in", "train arriving")),
            Happening(start=13.0, end=19.0, said="The train at platform two is going to Oxford.",
                      questions=_q("when is the destination announced?",
                                   "a voice over the speakers says where it is headed", "platform announcement")),
            Happening(start=22.0, end=29.0, captions=[
                "Passengers step off the train and crowd onto the platform.",
                "People get out of the carriages and walk toward the exit.",
                "Travellers pour out of the doors onto the platform."],
                questions=_q("when do passengers get off?", "commuters spill out of the coaches",
                             "people alighting")),
            Happening(start=33.0, end=40.0, captions=[
                "A man runs down the platform and squeezes through the closing doors.",
                "A late passenger sprints for the train and just makes it in.",
                "Running, a man dives through the doors as they shut."],
                questions=_q("when does the man run for the train?", "a latecomer legs it and only just catches it",
                             "running for the train")),
            Happening(start=45.0, end=53.0, captions=[
                "The train pulls away and leaves the station.",
                "The doors close and the train departs.",
                "Slowly, the train moves off down the line."],
                questions=_q("when does the train leave?", "the carriages head off along the tracks",
                             "train departing")),
        ],
        negatives=_n("the man falls onto the tracks", "a man runs for the bus",
                     "the man jumps off the train as the doors close", "a pigeon flies into a carriage"),
    ),
    Scene(
        name="skatepark_tricks", kind="sports", duration=54, backdrop=(150, 150, 140),
        scenes=["A phone video of an outdoor skatepark: concrete bowls, a half-pipe, rails and graffiti walls.",
                "Footage at a skate park with ramps, a grind rail and teenagers on boards."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "A skater drops into the half-pipe and rides up the far wall.",
                "A boarder rolls in from the top of the ramp and carves across.",
                "From the edge, a teenager pushes off into the half-pipe."],
                questions=_q("when does the skater drop in?", "a kid on a board goes over the lip and down",
                             "dropping in")),
            Happening(start=12.0, end=18.0, captions=[
                "A girl grinds along the metal rail on her skateboard.",
                "The skateboarder slides down the handrail on her board.",
                "On the rail, a girl scrapes her board along its length."],
                questions=_q("when does the girl grind the rail?", "a young woman rides the bar sideways",
                             "rail grind")),
            Happening(start=22.0, end=28.0, captions=[
                "A boy tries a kickflip, misses his board and falls hard.",
                "Attempting a flip trick, a boy lands off the board and sprawls on the ground.",
                "The kickflip goes wrong and the boy slams onto the concrete."],
                questions=_q("when does the boy fall off his skateboard?", "a lad bails on a trick and eats pavement",
                             "skater wipeout")),
            Happening(start=32.0, end=39.0, captions=[
                "Friends clap and cheer from the top of the ramp.",
                "Onlookers on the deck whoop and applaud.",
                "People watching from the edge shout and clap."],
                questions=_q("when do the friends cheer?", "the spectators make some noise", "cheering")),
            Happening(start=43.0, end=50.0, captions=[
                "The boy picks up his board and limps away.",
                "Holding his skateboard, the boy walks off slowly, favouring one leg.",
                "Limping, the injured boy carries his board out of the park."],
                questions=_q("when does the boy limp off?", "the hurt lad hobbles away with his deck under his arm",
                             "limping away")),
        ],
        negatives=_n("the girl falls off the rail", "a boy tries a kickflip on a scooter",
                     "the boy lands the kickflip cleanly", "a police officer tells them to leave"),
    ),
    Scene(
        name="airport_carousel", kind="travel", duration=58, backdrop=(140, 140, 150),
        scenes=["Arrivals hall CCTV over a baggage carousel: a rubber belt, suitcases and travellers waiting.",
                "Airport camera of a luggage reclaim belt with passengers and trolleys."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "The carousel starts moving and the first suitcases appear.",
                "Bags begin to come out onto the belt as it starts to turn.",
                "The luggage belt starts up and cases drop onto it."],
                questions=_q("when does the carousel start?", "the reclaim conveyor kicks into life",
                             "carousel starting")),
            Happening(start=14.0, end=20.0, captions=[
                "A man heaves a big red suitcase off the belt.",
                "A traveller lifts a heavy red case off the carousel.",
                "The man drags his large red bag from the moving belt."],
                questions=_q("when does the man take his red suitcase?", "a guy hauls his crimson luggage off",
                             "red case collected")),
            Happening(start=24.0, end=30.0, captions=[
                "A suitcase bursts open on the belt and clothes fall out.",
                "A bag pops open and its clothing spills onto the carousel.",
                "Clothes tumble out of a case that has come open on the belt."],
                questions=_q("when does the suitcase burst open?",
                             "someone's luggage splits and their garments go everywhere", "case bursting")),
            Happening(start=34.0, end=41.0, captions=[
                "A sniffer dog and its handler walk along the carousel.",
                "A border officer leads a detection dog past the bags.",
                "A spaniel on a lead checks the luggage with its handler."],
                questions=_q("when does the sniffer dog check the bags?", "an officer's hound inspects the cases",
                             "detection dog")),
            Happening(start=46.0, end=54.0, captions=[
                "A woman pushes a trolley piled with bags toward the exit.",
                "With a loaded luggage cart, a woman heads for the doors.",
                "The woman wheels her stacked trolley out of the hall."],
                questions=_q("when does the woman leave with her trolley?", "a lady steers her full cart out",
                             "trolley to the exit")),
        ],
        negatives=_n("the man opens his red suitcase", "a man heaves a pushchair off the belt",
                     "a man puts a red suitcase onto the belt", "a passenger is arrested at the carousel"),
    ),
    Scene(
        name="farm_sheepdog", kind="farm", duration=64, backdrop=(100, 140, 80),
        scenes=["A drone view of a hillside farm: a green field, a flock of sheep, a wooden pen and a farmer with "
                "a crook.",
                "Aerial footage of pasture with sheep, a collie and a stone wall."],
        events=[
            Happening(start=3.0, end=11.0, captions=[
                "A black and white collie races around the edge of the flock.",
                "The sheepdog sprints in a wide arc behind the sheep.",
                "A border collie circles the flock at speed."],
                questions=_q("when does the collie run round the sheep?", "the working dog swings out behind the animals",
                             "dog circling")),
            Happening(start=15.0, end=23.0, captions=[
                "The flock bunches together and moves toward the pen.",
                "The sheep crowd into a tight group and head for the enclosure.",
                "Driven by the dog, the sheep move as one toward the gate."],
                questions=_q("when do the sheep head to the pen?", "the herd huddles and makes for the fold",
                             "flock moving")),
            Happening(start=27.0, end=33.0, captions=[
                "One sheep breaks away and runs up the hill.",
                "A single sheep escapes from the group and bolts uphill.",
                "A lone ewe splits off from the others and dashes up the slope."],
                questions=_q("when does a sheep break away?", "a stray makes a run for it up the hillside",
                             "sheep escaping")),
            Happening(start=37.0, end=45.0, captions=[
                "The farmer whistles and the dog lies down flat.",
                "At the farmer's whistle, the collie drops to the ground.",
                "The dog stops and crouches low when the farmer signals."],
                questions=_q("when does the dog lie down?", "the herdsman's call makes the hound hit the dirt",
                             "dog down")),
            Happening(start=50.0, end=61.0, captions=[
                "The farmer closes the gate of the pen behind the sheep.",
                "The wooden gate is swung shut by the farmer once the flock is inside.",
                "With the sheep penned, the farmer latches the gate."],
                questions=_q("when does the farmer shut the gate?", "the shepherd secures the fold", "gate closed")),
        ],
        negatives=_n("the dog jumps over the stone wall", "the farmer closes the door of the barn",
                     "the farmer opens the gate and lets the sheep out", "a tractor drives across the field"),
    ),
    Scene(
        name="wedding_reception", kind="event", duration=58, backdrop=(170, 140, 150),
        scenes=["A guest's video of a wedding reception: round tables, fairy lights, a cake on a stand and a dance "
                "floor.",
                "Footage of a marquee party with the bride and groom, guests at tables and a band in the corner."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "The bride and groom cut the wedding cake together.",
                "The couple slice into the tiered cake with a big knife.",
                "Newlyweds make the first cut in the cake as guests watch."],
                questions=_q("when do they cut the cake?", "the happy pair carve into the tiers", "cake cutting")),
            Happening(start=13.0, end=19.0, said="I would like everyone to raise a glass to the happy couple.",
                      questions=_q("when does the best man propose a toast?",
                                   "a guest asks the room to drink to the newlyweds", "the toast")),
            Happening(start=22.0, end=29.0, captions=[
                "Guests lift their glasses and drink.",
                "Everyone at the tables raises a glass and sips.",
                "Around the room, people hold up their drinks and take a sip."],
                questions=_q("when do the guests drink?", "the whole room knocks back some bubbly",
                             "glasses raised")),
            Happening(start=33.0, end=42.0, captions=[
                "The newlyweds have their first dance under the lights.",
                "Bride and groom sway together alone on the dance floor.",
                "The married couple dance slowly while everyone watches."],
                questions=_q("when is the first dance?", "the pair take a twirl on their own", "first dance")),
            Happening(start=46.0, end=54.0, captions=[
                "An uncle trips on the dance floor and knocks over a table of drinks.",
                "A man stumbles into a table and glasses crash to the ground.",
                "Losing his footing, an older guest sends a table of drinks flying."],
                questions=_q("when does the man knock the drinks over?",
                             "a relative goes flying and takes the glassware with him", "table knocked over")),
        ],
        negatives=_n("the bride throws her bouquet", "the bride and groom cut a ribbon",
                     "an uncle sets the table back up and puts the drinks on it", "fireworks go off over the marquee"),
    ),
    Scene(
        name="boxing_bout", kind="sports", duration=50, backdrop=(120, 60, 60),
        scenes=["Ringside footage of an amateur boxing match: a roped ring, a referee, boxers in red and blue "
                "gloves.",
                "Camera at the edge of a boxing ring with two fighters, a referee and a judges' table."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "The boxer in red throws a right hook and the boxer in blue staggers.",
                "A right hook from the red fighter rocks his opponent.",
                "Red lands a hard hook and the blue boxer wobbles."],
                questions=_q("when does red land the hook?", "the fighter in scarlet connects with a big punch",
                             "right hook")),
            Happening(start=12.0, end=18.0, captions=[
                "The blue boxer goes down to the canvas.",
                "Blue is knocked to the floor of the ring.",
                "The fighter in blue drops onto the mat."],
                questions=_q("when is the blue boxer knocked down?", "the man in blue gets decked", "knockdown")),
            Happening(start=20.0, end=27.0, captions=[
                "The referee counts over the fallen boxer.",
                "Standing over blue, the referee gives him a count.",
                "The ref signals numbers with his hand as the boxer lies on the canvas."],
                questions=_q("when does the referee count?", "the official starts the ten over the downed fighter",
                             "the count")),
            Happening(start=30.0, end=37.0, captions=[
                "The blue boxer gets back up and raises his gloves.",
                "Blue climbs to his feet and puts his guard up.",
                "Back on his feet, the fighter in blue shows he can go on."],
                questions=_q("when does the blue boxer get up?", "the man in blue beats the count and is ready again",
                             "back on his feet")),
            Happening(start=41.0, end=48.0, captions=[
                "The bell rings and both boxers return to their corners.",
                "At the end of the round, the fighters walk back to their stools.",
                "The round ends and each boxer sits down in his corner."],
                questions=_q("when does the round end?", "time is called and they head to their seats",
                             "end of the round")),
        ],
        negatives=_n("the red boxer is knocked down", "the boxer in red throws his gum shield",
                     "the blue boxer stays down and is counted out", "a spectator climbs into the ring"),
    ),
    Scene(
        name="car_park_prowler", kind="parking", duration=56, backdrop=(100, 100, 105),
        scenes=["CCTV in a multi-storey car park: rows of parked cars, concrete pillars, a pay machine and a ramp.",
                "Security camera on a parking level with painted bays, a barrier and a stairwell door."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "A silver hatchback reverses into a space and bumps a pillar.",
                "Backing into a bay, a grey car knocks into a concrete column.",
                "A small silver car taps a pillar while parking in reverse."],
                questions=_q("when does the car hit the pillar?", "a motorist dings a post while backing up",
                             "pillar bump")),
            Happening(start=13.0, end=20.0, captions=[
                "The driver gets out and looks at the dented bumper.",
                "The woman gets out of her hatchback to check the damage at the back.",
                "Out of her car, the driver inspects the scrape on the rear."],
                questions=_q("when does the driver check the damage?", "the lady hops out to survey the ding",
                             "inspecting the dent")),
            Happening(start=24.0, end=31.0, captions=[
                "A man in a hoodie tries the door handles of parked cars.",
                "Someone in a hood walks along the row pulling on car doors.",
                "A hooded man checks whether the parked cars are unlocked."],
                questions=_q("when does the man try the car doors?", "a bloke sees if any of the motors are open",
                             "testing car doors")),
            Happening(start=35.0, end=41.0, captions=[
                "A security guard walks up and the man in the hoodie runs off.",
                "When a guard appears, the hooded man flees down the ramp.",
                "The man in the hood bolts as a security officer approaches."],
                questions=_q("when does the man in the hoodie run away?", "the prowler scarpers when staff show up",
                             "prowler fleeing")),
            Happening(start=45.0, end=52.0, captions=[
                "The barrier lifts and a van drives out of the car park.",
                "A white van passes under the raised barrier and leaves.",
                "The exit barrier goes up to let a van out."],
                questions=_q("when does the van leave?", "the gate arm rises for a delivery vehicle heading out",
                             "van exiting")),
        ],
        negatives=_n("the man in the hoodie smashes a car window", "a silver hatchback bumps the pay machine",
                     "a van drives in under the barrier", "a car catches fire on the ramp"),
    ),
]
