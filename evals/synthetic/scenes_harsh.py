"""Six more scenes for the held-out part, written apart from ``scenes.py`` in words of their own.

Kinds the first world lacks (warehouse CCTV, a classroom, a concert stage, a cycling race,
pets at home, a building site), with captions, questions and negatives that reuse none of
the first world's phrasing, so a verifier tuned on the calibration scenes cannot lean on
familiar wording. Near misses are harsher here: the same actor doing the next thing, the
same action on the neighbouring object, the reverse of what happens. The cycling race is
long enough to be cut into two chunks, with the breakaway straddling the cut.
"""

from __future__ import annotations

from evals.synthetic.scene_model import Happening, Scene, _n, _q

HARSH: list[Scene] = [
    Scene(
        name="warehouse_forklift", kind="security", duration=62, backdrop=(95, 90, 70),
        scenes=["Ceiling-mounted CCTV over a warehouse aisle lined with tall pallet racking, a loading bay shutter "
                "at the far end.",
                "Fixed overhead camera in a distribution centre: shelving stacked with shrink-wrapped pallets and a "
                "roller door."],
        events=[
            Happening(start=4.0, end=12.0, captions=[
                "A yellow forklift reverses out of the aisle with an empty fork.",
                "A forklift truck backs away from the racking, forks raised and bare.",
                "The lift truck pulls backwards into the main gangway, carrying nothing."],
                questions=_q("when does the forklift back out?", "the lift truck reverses away from the shelves",
                             "forklift reversing")),
            Happening(start=16.0, end=24.0, captions=[
                "The forklift lifts a pallet of cartons onto the top shelf.",
                "A pallet stacked with boxes is raised and slotted onto the highest rack.",
                "Forks hoist a loaded pallet up to the upper level of the racking."],
                questions=_q("when is the pallet put on the top shelf?",
                             "the truck raises a load of boxes up to the highest rack", "pallet going up")),
            Happening(start=28.0, end=33.0, captions=[
                "A worker in a hi-vis vest walks across the aisle in front of the forklift.",
                "Someone wearing a fluorescent safety vest steps into the gangway ahead of the truck.",
                "An employee in a reflective jacket crosses the path of the forklift."],
                questions=_q("when does someone walk in front of the forklift?",
                             "a staff member in a high-visibility vest crosses ahead of the truck",
                             "worker crossing")),
            Happening(start=38.0, end=45.0, captions=[
                "A stack of cardboard boxes topples off a pallet onto the floor.",
                "Several cartons slide off the pallet and crash down onto the concrete.",
                "Boxes tumble from the top of a pallet and scatter across the ground."],
                questions=_q("when do the boxes fall over?", "cartons drop off the stack onto the floor",
                             "boxes toppling")),
            Happening(start=50.0, end=57.0, captions=[
                "The loading bay shutter rolls up and daylight floods in.",
                "The roller door at the end of the aisle opens, letting in sunlight.",
                "The bay door is raised and light pours into the warehouse."],
                questions=_q("when does the loading bay door open?", "the roller shutter goes up",
                             "shutter opening")),
        ],
        negatives=_n("the forklift drops its pallet on the floor", "the forklift lifts a pallet of tyres",
                     "the loading bay shutter rolls down and closes", "a fire breaks out in the warehouse"),
    ),
    Scene(
        name="classroom_lesson", kind="talk", duration=58, backdrop=(160, 150, 120),
        scenes=["A primary school classroom filmed from the back: rows of small desks, pupils facing a whiteboard "
                "and a teacher's desk.",
                "Back-of-room recording of a lesson with children at tables and a teacher by the whiteboard."],
        events=[
            Happening(start=3.0, end=10.0, captions=[
                "The teacher writes a long division sum on the whiteboard with a blue marker.",
                "At the front, the teacher draws out a division problem in marker pen.",
                "A sum is written up on the board by the teacher."],
                questions=_q("when does the teacher write on the board?",
                             "the instructor puts a maths problem up on the whiteboard", "writing the sum")),
            Happening(start=14.0, end=20.0, captions=[
                "A girl in the second row puts her hand up.",
                "One of the pupils, a girl near the front, raises an arm.",
                "A young student lifts her arm to answer."],
                questions=_q("when does a pupil put her hand up?", "a schoolgirl raises her arm",
                             "girl's hand up")),
            Happening(start=24.0, end=30.0, said="Remember, your homework is due on Friday.",
                      questions=_q("when does the teacher say when the homework is due?",
                                   "the teacher reminds the class of the homework deadline",
                                   "homework due Friday")),
            Happening(start=34.0, end=41.0, captions=[
                "A boy knocks a pencil case off his desk and pens scatter on the floor.",
                "Pens spill across the floor when a boy's pencil case falls from the table.",
                "A pupil drops his pencil case and its contents spread over the carpet."],
                questions=_q("when does the pencil case fall?", "a kid's pens go all over the floor",
                             "pencil case dropped")),
            Happening(start=46.0, end=54.0, captions=[
                "The pupils stand up and pack their bags as the lesson ends.",
                "Children rise from their seats and put their books away.",
                "Everyone gets up from the desks and gathers their things."],
                questions=_q("when do the children pack up?", "the class stands and puts their books into bags",
                             "packing up")),
        ],
        negatives=_n("the teacher wipes the whiteboard clean", "a boy knocks a lunchbox off his desk",
                     "the pupils sit down and take their books out", "the teacher plays a guitar"),
    ),
    Scene(
        name="concert_stage", kind="performance", duration=66, backdrop=(45, 25, 70),
        scenes=["A rock concert seen from the crowd: a stage washed in purple light, a drum riser and two guitarists.",
                "Phone footage of a live gig, the band lit by coloured spotlights above a packed audience."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "The drummer counts in, clicking his sticks together above his head.",
                "Drumsticks tap four times as the drummer starts the song.",
                "The percussionist raises his sticks and beats the count-in."],
                questions=_q("when does the drummer count in?", "the percussionist clicks his sticks to start",
                             "count-in")),
            Happening(start=12.0, end=20.0, captions=[
                "Jets of white smoke shoot up from the front of the stage.",
                "Cannons at the stage edge fire columns of fog into the air.",
                "Plumes of stage smoke burst upward along the front."],
                questions=_q("when does the smoke go off?", "fog cannons blast along the front of the stage",
                             "smoke jets")),
            Happening(start=25.0, end=33.0, captions=[
                "The lead guitarist kneels at the edge of the stage and plays a solo.",
                "Down on one knee at the front, the guitarist rips through a solo.",
                "A guitar solo, played by the lead guitarist crouching near the crowd."],
                questions=_q("when is the guitar solo?", "the lead player shreds on his knees at the front",
                             "guitar solo")),
            Happening(start=38.0, end=44.0, captions=[
                "The singer jumps off the stage into the crowd, which carries him along.",
                "The vocalist leaps into the audience and is held up above their heads.",
                "The frontman dives into the arms of the fans."],
                questions=_q("when does the singer stage-dive?", "the vocalist throws himself into the audience",
                             "crowd surfing")),
            Happening(start=50.0, end=58.0, captions=[
                "Confetti rains down over the audience from cannons above the stage.",
                "Paper streamers and confetti shower the crowd.",
                "A burst of confetti falls across the fans."],
                questions=_q("when does the confetti come down?", "paper bits shower the fans",
                             "confetti falling")),
        ],
        negatives=_n("the singer smashes a guitar on the stage", "the guitarist plays a solo on a keyboard",
                     "the singer climbs back out of the crowd onto the stage",
                     "the stage lights go out in a power cut"),
    ),
    Scene(
        name="cycling_breakaway", kind="sports", duration=110, backdrop=(170, 160, 120),
        scenes=["Helicopter coverage of a road cycling race winding through vineyards, a peloton of riders in "
                "bright team kits.",
                "Aerial shot of a professional bike race on a country road lined with spectators."],
        events=[
            Happening(start=6.0, end=16.0, captions=[
                "The peloton sweeps round a long bend between the vineyards.",
                "The main pack of riders flows through a wide curve in the road.",
                "A big bunch of cyclists takes the sweeping corner together."],
                questions=_q("when does the pack go round the bend?", "the main group rides through the curve",
                             "peloton cornering")),
            Happening(start=22.0, end=30.0, captions=[
                "A rider in a green jersey crashes on a corner and slides into the verge.",
                "One cyclist in green loses grip and falls onto the grass.",
                "A green-shirted racer goes down hard on the bend."],
                questions=_q("when does the rider crash?", "a racer in green comes off his bike", "the crash")),
            Happening(start=48.0, end=63.0, captions=[
                "Two riders attack off the front and open a gap on the peloton.",
                "A pair of cyclists sprints clear of the bunch and pulls away.",
                "Two racers break away from the main group and build a lead."],
                questions=_q("when do the two riders break away?", "a couple of cyclists escape from the bunch",
                             "the breakaway")),
            Happening(start=72.0, end=80.0, captions=[
                "A team car passes a water bottle to a rider from its window.",
                "From the support vehicle, someone hands a drink bottle to a cyclist.",
                "A rider grabs a bidon held out of a team car."],
                questions=_q("when is the water bottle handed over?", "a racer takes a drink from the support car",
                             "bottle hand-up")),
            Happening(start=92.0, end=104.0, captions=[
                "The leading rider crosses the finish line with both arms raised.",
                "Arms up in triumph, the winner rolls over the line.",
                "The first cyclist reaches the finish and celebrates with raised arms."],
                questions=_q("when does the winner cross the line?", "the first racer finishes with his arms up",
                             "the finish")),
        ],
        negatives=_n("the rider in green fixes a puncture at the roadside", "a spectator hands a flag to a rider",
                     "the peloton catches the two riders and swallows the breakaway",
                     "a motorbike crashes into the crowd"),
    ),
    Scene(
        name="pets_living_room", kind="home", duration=50, backdrop=(150, 120, 100),
        scenes=["A pet camera on a shelf shows a living room with a grey sofa, a rug, a coffee table and a window.",
                "Home monitoring footage of a lounge: couch, low table, houseplant and a dog bed by the window."],
        events=[
            Happening(start=3.0, end=9.0, captions=[
                "A black labrador jumps up onto the sofa and curls up.",
                "The dog hops onto the couch and lies down.",
                "A large black dog climbs on the settee and settles into a ball."],
                questions=_q("when does the dog get on the sofa?", "the labrador hops up on the couch",
                             "dog on the couch")),
            Happening(start=13.0, end=19.0, captions=[
                "A tabby cat knocks a mug off the coffee table.",
                "The cat swipes a cup off the low table and it drops to the rug.",
                "A striped cat pushes a mug over the edge of the table."],
                questions=_q("when does the cat knock the mug off?", "the kitty swats the cup onto the floor",
                             "mug falling")),
            Happening(start=23.0, end=29.0, captions=[
                "The dog chews a cushion and pulls out its stuffing.",
                "Stuffing comes out as the labrador tears at a pillow.",
                "The dog rips a cushion apart with its teeth."],
                questions=_q("when does the dog tear up the cushion?", "the labrador shreds a pillow",
                             "cushion chewing")),
            Happening(start=33.0, end=40.0, captions=[
                "The cat leaps onto the windowsill and watches birds outside.",
                "The tabby jumps up to the window ledge and stares out.",
                "A cat springs onto the sill to look through the glass."],
                questions=_q("when does the cat jump on the windowsill?", "the tabby hops onto the window ledge",
                             "cat at the window")),
            Happening(start=43.0, end=48.0, captions=[
                "The dog runs to the front door, wagging its tail.",
                "The labrador dashes to the door and wags excitedly.",
                "Tail wagging, the black dog rushes toward the entrance."],
                questions=_q("when does the dog run to the door?", "the labrador races to the entrance",
                             "dog at the door")),
        ],
        negatives=_n("the dog knocks a mug off the coffee table", "the cat chews a cushion",
                     "the cat jumps down from the windowsill to the floor", "a parrot flies across the room"),
    ),
    Scene(
        name="building_site", kind="construction", duration=68, backdrop=(150, 140, 110),
        scenes=["A timelapse-style site camera overlooks a building site: a half-built concrete frame, a tower crane "
                "and a cement mixer.",
                "Construction site webcam with scaffolding, a crane, stacks of bricks and builders in hard hats."],
        events=[
            Happening(start=4.0, end=13.0, captions=[
                "The tower crane lowers a bundle of steel beams onto the second floor.",
                "Steel girders are swung over by the crane and set down on the upper level.",
                "A crane lowers a load of metal beams onto the concrete slab."],
                questions=_q("when does the crane lower the beams?", "girders are set down by the crane",
                             "steel being lowered")),
            Happening(start=17.0, end=25.0, captions=[
                "A cement mixer truck pours concrete down a chute into a trench.",
                "Concrete flows from the mixer lorry's chute into the foundation.",
                "The mixer discharges wet concrete into the footing."],
                questions=_q("when is the concrete poured?", "the mixer empties cement into the foundation trench",
                             "pouring concrete")),
            Happening(start=29.0, end=35.0, captions=[
                "A builder in an orange hard hat climbs a ladder up the scaffolding.",
                "A worker wearing an orange helmet goes up the scaffold ladder.",
                "Someone in a hard hat ascends the ladder to the next lift of scaffolding."],
                questions=_q("when does the builder climb the ladder?", "a construction worker goes up the scaffold",
                             "climbing up")),
            Happening(start=40.0, end=47.0, captions=[
                "A digger scoops earth and dumps it into a tipper truck.",
                "An excavator lifts a bucket of soil into the back of a lorry.",
                "The mechanical shovel loads dirt onto a dump truck."],
                questions=_q("when does the excavator load the truck?", "the digger fills a lorry with soil",
                             "digger loading")),
            Happening(start=54.0, end=62.0, captions=[
                "A pallet of bricks slips from its sling and smashes on the ground.",
                "Bricks fall out of the crane's strap and break apart on the ground.",
                "A load of bricks drops from the lifting sling and shatters."],
                questions=_q("when do the bricks fall?", "a load of bricks crashes to the ground from the sling",
                             "dropped bricks")),
        ],
        negatives=_n("the crane lifts a portable toilet", "the digger scoops snow into the truck",
                     "the crane raises the steel beams back off the second floor", "an ambulance arrives at the site"),
    ),
]
