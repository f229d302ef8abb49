/**
 * Subjects for the bench's documents (documents.ts), each its own words: nouns, verbs in the third
 * person and adjectives, all common English with word vectors of their own in the offline
 * embedder's vocabulary, so that chunks about different subjects differ in meaning as they do in
 * a real user's files. Written once for variety (shop support, household, health, work, science,
 * leisure); not tuned to any embedder or index.
 */
export interface Topic {
  nouns: readonly string[];
  verbs: readonly string[];
  adjectives: readonly string[];
}

const topic = (nouns: string, verbs: string, adjectives: string): Topic => ({ nouns: nouns.split(' '), verbs: verbs.split(' '), adjectives: adjectives.split(' ') });

export const TOPICS: readonly Topic[] = [
  topic(
    'refund parcel invoice warranty courier order customer payment delivery return receipt voucher discount basket checkout shipment label package seller buyer complaint exchange',
    'delays confirms covers reaches cancels replaces charges ships tracks approves',
    'damaged late missing free urgent partial express faulty original prepaid',
  ),
  topic(
    'recipe oven flour butter onion garlic sauce pasta dough salad soup pan spoon kitchen dessert pepper lemon cheese bread dinner chicken vinegar',
    'bakes stirs chops roasts simmers tastes boils mixes serves melts',
    'crispy fresh spicy sweet salty creamy tender golden bitter homemade',
  ),
  topic(
    'garden soil seed tomato rose hedge compost lawn shovel greenhouse orchard tulip weed fertilizer pot branch root leaf blossom vegetable hose',
    'grows waters prunes plants blooms digs harvests sprouts wilts trims',
    'green muddy shady ripe organic fertile dry leafy wild seasonal',
  ),
  topic(
    'telescope planet orbit galaxy comet asteroid moon nebula star astronomer eclipse satellite gravity rocket observatory universe meteor spacecraft mission crater',
    'orbits observes launches rotates collides measures detects explodes drifts shines',
    'distant lunar solar cosmic bright faint massive stellar infrared interstellar',
  ),
  topic(
    'loan mortgage interest budget savings pension dividend stock bond inflation tax salary debt investor portfolio bank account deposit credit expense',
    'borrows invests saves lends earns repays deducts withdraws compounds audits',
    'annual monthly fiscal taxable liquid risky profitable bankrupt retired wealthy',
  ),
  topic(
    'doctor patient fever vaccine nurse clinic prescription symptom allergy surgery hospital dose infection therapy diagnosis antibiotic ambulance pharmacy blood injury',
    'prescribes treats heals examines diagnoses recovers injects bandages relieves monitors',
    'chronic acute painful contagious sterile medical sick healthy swollen clinical',
  ),
  topic(
    'contract lawyer court judge tenant landlord lease clause lawsuit witness verdict appeal statute license fine permit evidence jury attorney settlement',
    'signs sues rules testifies appeals breaches enforces drafts terminates negotiates',
    'legal binding illegal liable void criminal civil fair confidential federal',
  ),
  topic(
    'server database query bug compiler browser network password backup script deployment cache keyboard laptop software update cluster firewall algorithm terminal',
    'crashes compiles deploys restarts encrypts logs debugs installs syncs caches',
    'slow secure remote digital offline encrypted virtual stable broken wireless',
  ),
  topic(
    'guitar piano concert melody choir drum album orchestra violin song singer rhythm chord lyrics stage festival composer audience microphone band',
    'sings plays rehearses composes tunes performs records strums conducts applauds',
    'loud quiet acoustic classical melodic jazzy harmonic live catchy musical',
  ),
  topic(
    'football match goal referee stadium coach team player league tournament trophy penalty runner marathon swimmer tennis racket season fan champion',
    'scores wins trains kicks defends tackles qualifies sprints coaches cheers',
    'athletic fast fit competitive professional amateur injured winning olympic tired',
  ),
  topic(
    'flight airport passport hotel luggage beach island museum tour ticket train cruise suitcase itinerary passenger visa tourist border harbour village',
    'travels flies books departs arrives explores visits boards lands wanders',
    'scenic sunny crowded tropical foreign historic coastal exotic cheap overnight',
  ),
  topic(
    'roof kitchen bathroom plumber boiler window wall paint floor carpet heater neighbour apartment garage staircase tile ceiling door furniture rent',
    'repairs renovates leaks paints installs heats cleans furnishes insulates rents',
    'cosy spacious damp noisy modern cramped bright wooden furnished tiled',
  ),
  topic(
    'teacher student school exam homework lesson classroom university lecture grade degree textbook semester professor essay library tutor diploma scholarship curriculum',
    'teaches studies learns graduates enrols lectures revises grades reads writes',
    'academic difficult graduate primary bilingual curious diligent elementary written oral',
  ),
  topic(
    'rain storm snow wind forecast temperature cloud thunder drought flood humidity frost hurricane climate sunshine breeze fog lightning monsoon hail',
    'rains pours freezes blows floods warms cools thunders clears melts',
    'cold warm humid stormy windy foggy chilly freezing tropical mild',
  ),
  topic(
    'cell gene protein enzyme bacteria virus organism species evolution mutation membrane tissue muscle nerve brain fossil habitat predator insect mammal',
    'evolves mutates digests reproduces divides migrates feeds adapts hunts breeds',
    'genetic cellular microscopic biological marine extinct aquatic toxic natural endangered',
  ),
  topic(
    'engine brake tyre mechanic garage battery fuel clutch gearbox bumper headlight exhaust mileage dashboard windscreen driver motorway trailer steering truck',
    'drives brakes accelerates overtakes tows refuels stalls parks skids steers',
    'electric diesel reliable rusty used secondhand automatic manual fuel-efficient parked',
  ),
  topic(
    'king empire castle battle treaty revolution army dynasty monarch peasant knight colony throne siege parliament emperor ruin archive century chronicle',
    'conquers reigns invades rebels abolishes founds defeats besieges crowns surrenders',
    'ancient medieval royal imperial colonial feudal victorious ruined noble historical',
  ),
  topic(
    'painting canvas sculpture gallery portrait brush artist exhibition sketch colour frame museum palette mural collector drawing pottery statue studio masterpiece',
    'paints sketches sculpts exhibits frames carves draws restores collects displays',
    'abstract vivid colourful realist modernist framed pale ornate symbolic impressionist',
  ),
  topic(
    'solar turbine grid electricity voltage coal pipeline reactor emissions battery wind carbon generator utility meter outage refinery gas nuclear plant',
    'generates powers emits supplies consumes charges stores distributes burns converts',
    'renewable nuclear efficient green fossil electrical thermal hydraulic clean wasteful',
  ),
  topic(
    'policy premium claim insurer accident coverage deductible broker adjuster damage liability theft insurance beneficiary quote renewal excess loss hazard fraud',
    'insures covers pays reimburses assesses renews cancels excludes compensates inspects',
    'insured comprehensive uninsured total accidental valid expired eligible minor costly',
  ),
  topic(
    'employee manager interview salary vacancy resume colleague promotion meeting deadline office shift overtime payroll training holiday recruiter contract team bonus',
    'hires fires promotes resigns recruits schedules supervises trains interviews retires',
    'remote temporary permanent senior junior skilled unemployed flexible managerial hourly',
  ),
  topic(
    'acid molecule atom reaction solvent crystal element compound catalyst laboratory beaker oxygen hydrogen nitrogen sodium metal polymer solution chemist formula',
    'reacts dissolves heats oxidises evaporates crystallises binds filters dilutes ignites',
    'acidic chemical organic toxic soluble volatile inert metallic liquid gaseous',
  ),
  topic(
    'dress jacket shirt fabric cotton wool silk tailor boutique fashion designer trousers shoe sleeve collar pattern zipper button scarf wardrobe',
    'sews knits tailors fits wears stitches folds irons designs models',
    'elegant casual tight loose stylish vintage woollen silky fashionable formal',
  ),
  topic(
    'dog cat puppy kitten vet leash collar aquarium parrot hamster rabbit horse stable kennel breed tail fur paw saddle cage',
    'barks purrs fetches grooms adopts walks sheds chews nibbles gallops',
    'furry playful loyal stray tame obedient fluffy hungry sleepy wild',
  ),
  topic(
    'election candidate vote parliament senator mayor campaign ballot minister government debate referendum policy coalition voter president opposition reform legislation citizen',
    'elects votes campaigns governs debates legislates resigns nominates vetoes protests',
    'political democratic conservative liberal municipal electoral presidential national local partisan',
  ),
  topic(
    'novel poem author chapter poet plot character reader publisher manuscript fiction editor library biography verse narrator sequel bookshop translation memoir',
    'writes publishes reads edits translates narrates reviews recites rhymes illustrates',
    'fictional poetic literary romantic tragic comic epic lyrical bestselling unfinished',
  ),
  topic(
    'farm cattle wheat tractor barn harvest crop sheep dairy milk pasture irrigation plough grain orchard livestock hay fence barley silo',
    'farms ploughs milks sows harvests grazes irrigates feeds shears breeds',
    'rural fertile agricultural organic dairy seasonal arable dusty barren grassy',
  ),
  topic(
    'ocean ship sailor harbour anchor wave tide captain crew deck voyage lighthouse fisherman net coral reef submarine whale shore current',
    'sails anchors navigates drifts sinks docks fishes dives floats capsizes',
    'nautical salty marine stormy calm deep shallow coastal tidal rough',
  ),
  topic(
    'camera photograph lens film movie director actor scene studio screen cinema script festival documentary editor trailer audience lighting shot premiere',
    'films shoots directs edits stars focuses zooms screens captures projects',
    'cinematic dramatic blurry sharp documentary animated silent wide widescreen candid',
  ),
  topic(
    'mountain hiker trail summit cliff valley glacier tent campfire backpack compass forest river canyon waterfall ridge map boots lake cave',
    'climbs hikes camps descends explores crosses shelters paddles treks ascends',
    'steep rocky snowy remote muddy alpine wooded scenic icy exhausted',
  ),
  topic(
    'baby child parent toddler nursery cradle nappy bottle toy grandparent sibling cousin family birthday wedding anniversary godmother teenager daughter nephew',
    'babysits feeds cuddles raises adopts marries celebrates visits comforts scolds',
    'newborn cheerful grumpy teenage elderly loving adopted married pregnant young',
  ),
  topic(
    'factory machine worker assembly robot conveyor warehouse forklift inventory supplier shipment pallet production defect quality welding tool crane logistics component',
    'manufactures assembles welds packs stacks ships inspects supplies loads produces',
    'industrial automated defective mechanical heavy precise bulk lean efficient faulty',
  ),
];
