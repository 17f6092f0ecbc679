// A recall set the tests own (and bench/ reuses): facts told by 20 users
// over several sessions, each acknowledged by the agent, and 100 questions
// with known answers. Every user has a fact of every kind (a sister's city,
// a pet, an allergy ...) with their own values, so each question has
// look-alike answers in other users' memories (which must never come
// back) and facts of other kinds in the asker's own memory. Half of the
// questions are paraphrases that share only some words with the fact.
// Deterministic: no randomness, so a failure reproduces.

export interface Fact {
  kind: string;
  text: string;
  /** A phrase only this fact (of this user) holds. */
  answer: string;
}

export interface RecallUser {
  userId: string;
  /** Sessions, each a list of facts the user states in turn. */
  sessions: Fact[][];
}

export interface Question {
  userId: string;
  kind: string;
  text: string;
  answer: string;
  paraphrase: boolean;
}

const NAMES = [
  "Ana",
  "Bea",
  "Carla",
  "Dora",
  "Eva",
  "Fay",
  "Gina",
  "Hana",
  "Iris",
  "Jana",
  "Kira",
  "Lena",
  "Mira",
  "Nora",
  "Olga",
  "Pia",
  "Rosa",
  "Sara",
  "Tina",
  "Vera",
];
const CITIES = [
  "Lisbon",
  "Oslo",
  "Quito",
  "Dakar",
  "Hanoi",
  "Perth",
  "Lima",
  "Riga",
  "Tunis",
  "Cork",
  "Bergen",
  "Malmo",
  "Porto",
  "Split",
  "Ghent",
  "Turin",
  "Bilbao",
  "Krakow",
  "Tartu",
  "Nantes",
];
const PETS = [
  "dog",
  "cat",
  "parrot",
  "rabbit",
  "hamster",
  "turtle",
  "dog",
  "cat",
  "ferret",
  "goldfish",
  "dog",
  "cat",
  "lizard",
  "pony",
  "dog",
  "cat",
  "canary",
  "gecko",
  "dog",
  "cat",
];
const PET_NAMES = [
  "Rex",
  "Milo",
  "Kiwi",
  "Bruno",
  "Pip",
  "Shelly",
  "Odin",
  "Luna",
  "Ziggy",
  "Bubbles",
  "Max",
  "Nala",
  "Spike",
  "Misty",
  "Toby",
  "Cleo",
  "Sunny",
  "Gizmo",
  "Rocky",
  "Tigger",
];
const ALLERGENS = [
  "peanuts",
  "shellfish",
  "penicillin",
  "pollen",
  "latex",
  "sesame",
  "walnuts",
  "dust mites",
  "strawberries",
  "wasp stings",
  "gluten",
  "soy",
  "eggs",
  "mustard",
  "celery",
  "kiwi fruit",
  "lupin",
  "cashews",
  "mango",
  "ragweed",
];
const JOBS = [
  "nurse",
  "carpenter",
  "pilot",
  "teacher",
  "architect",
  "chef",
  "plumber",
  "librarian",
  "dentist",
  "electrician",
  "baker",
  "pharmacist",
  "welder",
  "translator",
  "surveyor",
  "florist",
  "geologist",
  "paramedic",
  "tailor",
  "zookeeper",
];
const COMPANIES = [
  "Northwind",
  "Contoso",
  "Initech",
  "Globex",
  "Umbrella",
  "Hooli",
  "Vandelay",
  "Acme",
  "Stark",
  "Wayne",
  "Tyrell",
  "Cyberdyne",
  "Soylent",
  "Wonka",
  "Gringotts",
  "Oscorp",
  "Aperture",
  "Massive",
  "Monarch",
  "Pied Piper",
];
const COLORS = [
  "red",
  "blue",
  "green",
  "silver",
  "black",
  "white",
  "yellow",
  "orange",
  "grey",
  "purple",
  "red",
  "blue",
  "green",
  "silver",
  "black",
  "white",
  "yellow",
  "orange",
  "grey",
  "purple",
];
const CARS = [
  "Volvo",
  "Fiat",
  "Toyota",
  "Skoda",
  "Honda",
  "Renault",
  "Mazda",
  "Seat",
  "Kia",
  "Opel",
  "Saab",
  "Lancia",
  "Subaru",
  "Dacia",
  "Nissan",
  "Peugeot",
  "Citroen",
  "Suzuki",
  "Hyundai",
  "Mini",
];
const DATES = [
  "3 March",
  "14 July",
  "9 May",
  "21 June",
  "30 October",
  "2 January",
  "17 August",
  "25 April",
  "11 November",
  "6 February",
  "19 September",
  "28 December",
  "4 May",
  "12 June",
  "23 July",
  "8 October",
  "15 March",
  "27 January",
  "1 September",
  "13 April",
];
const FOODS = [
  "lasagne",
  "ramen",
  "paella",
  "sushi",
  "moussaka",
  "pierogi",
  "tacos",
  "goulash",
  "risotto",
  "pho",
  "falafel",
  "curry",
  "gnocchi",
  "ceviche",
  "bibimbap",
  "fondue",
  "couscous",
  "dumplings",
  "empanadas",
  "pad thai",
];
const HOBBIES = [
  "climbing",
  "sailing",
  "birdwatching",
  "kayaking",
  "fishing",
  "cycling",
  "pottery",
  "hiking",
  "surfing",
  "chess",
  "gardening",
  "skating",
  "rowing",
  "archery",
  "caving",
  "painting",
  "fencing",
  "juggling",
  "knitting",
  "orienteering",
];
const TEAMS = [
  "Benfica",
  "Rosenborg",
  "Barcelona",
  "Celtic",
  "Ajax",
  "Porto FC",
  "Napoli",
  "Galatasaray",
  "Anderlecht",
  "Boca Juniors",
  "Dortmund",
  "Sevilla",
  "Feyenoord",
  "Lazio",
  "Basel",
  "Sparta",
  "Olympiacos",
  "Marseille",
  "Malmo FF",
  "Dinamo",
];
const LANGUAGES = [
  "Japanese",
  "Welsh",
  "Swahili",
  "Finnish",
  "Korean",
  "Greek",
  "Turkish",
  "Polish",
  "Hindi",
  "Icelandic",
  "Dutch",
  "Arabic",
  "Hebrew",
  "Czech",
  "Thai",
  "Basque",
  "Hungarian",
  "Tagalog",
  "Danish",
  "Catalan",
];
const DOCTORS = [
  "Alvarez",
  "Brennan",
  "Chowdhury",
  "Dimitrov",
  "Eriksen",
  "Fischer",
  "Gallo",
  "Haddad",
  "Ivanova",
  "Jensen",
  "Kowalski",
  "Larsen",
  "Moreau",
  "Novak",
  "Okafor",
  "Petrov",
  "Quinn",
  "Rossi",
  "Sato",
  "Tanaka",
];
const PASSWORDS = [
  "bluefox42",
  "tiger-moon",
  "sunflower9",
  "ocean#77",
  "maplesyrup",
  "rocket88",
  "purplerain",
  "kettle-51",
  "snowowl3",
  "lemonade7",
  "copper-kite",
  "violet22",
  "thunder5",
  "pinecone8",
  "starfish1",
  "velvet-fig",
  "marble-66",
  "nightjar4",
  "quartz-19",
  "harbor-12",
];

type Kind = (i: number) => { text: string; answer: string; questions: [string, string] };

// Each kind: the fact, then a direct question and a paraphrase.
const KINDS: Record<string, Kind> = {
  sister: (i) => ({
    text: `My sister ${NAMES[i]} lives in ${CITIES[i]} now.`,
    answer: CITIES[i] as string,
    questions: ["Where does my sister live now?", `Which city is ${NAMES[i]} based in?`],
  }),
  pet: (i) => ({
    text: `I have a ${PETS[i]} named ${PET_NAMES[i]}.`,
    answer: PET_NAMES[i] as string,
    questions: [`What is the name of my ${PETS[i]}?`, `What did I call my ${PETS[i]}?`],
  }),
  allergy: (i) => ({
    text: `I am allergic to ${ALLERGENS[i]}, please keep that in mind.`,
    answer: ALLERGENS[i] as string,
    questions: ["What am I allergic to?", "Which things give me an allergic reaction?"],
  }),
  job: (i) => ({
    text: `I work as a ${JOBS[i]} at ${COMPANIES[i]}.`,
    answer: COMPANIES[i] as string,
    questions: ["Where do I work?", "What is my job and which company do I work for?"],
  }),
  car: (i) => ({
    text: `My car is a ${COLORS[i]} ${CARS[i]}.`,
    answer: CARS[i] as string,
    questions: ["What car do I have?", "What colour is my car?"],
  }),
  birthday: (i) => ({
    text: `My birthday is on ${DATES[i]}.`,
    answer: DATES[i] as string,
    questions: ["When is my birthday?", "On which day do I celebrate my birthday?"],
  }),
  food: (i) => ({
    text: `My favourite food is ${FOODS[i]}.`,
    answer: FOODS[i] as string,
    questions: ["What is my favourite food?", "Which food should you suggest for my dinner?"],
  }),
  hobby: (i) => ({
    text: `On weekends I usually go ${HOBBIES[i]}.`,
    answer: HOBBIES[i] as string,
    questions: ["What do I do on weekends?", "How do I usually spend my weekends?"],
  }),
  team: (i) => ({
    text: `I support ${TEAMS[i]} in football.`,
    answer: TEAMS[i] as string,
    questions: ["Which football team do I support?", "Who do I cheer for in football?"],
  }),
  language: (i) => ({
    text: `I am learning ${LANGUAGES[i]} this year.`,
    answer: LANGUAGES[i] as string,
    questions: ["Which language am I learning?", "What am I learning this year?"],
  }),
  doctor: (i) => ({
    text: `My doctor is Dr. ${DOCTORS[i]} at the Riverside clinic.`,
    answer: DOCTORS[i] as string,
    questions: ["Who is my doctor?", "What is the name of the doctor I see at the clinic?"],
  }),
  wifi: (i) => ({
    text: `The wifi password at home is ${PASSWORDS[i]}.`,
    answer: PASSWORDS[i] as string,
    questions: ["What is the wifi password?", "How do I get on the home wifi, what was the password?"],
  }),
};

export const KIND_NAMES = Object.keys(KINDS);
export const USER_COUNT = 20;
export const QUESTIONS_PER_USER = 5;
/** The agent's answer after each fact: it becomes a memory too, and matches many questions' small words. */
export const ACKNOWLEDGEMENT = "Thanks, I will remember that for next time.";

export function recallSet(): { users: RecallUser[]; questions: Question[] } {
  const users: RecallUser[] = [];
  const questions: Question[] = [];
  for (let u = 0; u < USER_COUNT; u++) {
    const userId = `user-${String(u).padStart(2, "0")}`;
    const facts = KIND_NAMES.map((kind, k) => {
      // Each user gets every kind, with values shifted per kind so no two
      // users share a combination.
      const made = (KINDS[kind] as Kind)((u + k * 3) % USER_COUNT);
      return { kind, text: made.text, answer: made.answer, questions: made.questions };
    });
    // Three sessions of four facts each.
    users.push({
      userId,
      sessions: [0, 1, 2].map((s) => facts.slice(s * 4, s * 4 + 4).map(({ kind, text, answer }) => ({ kind, text, answer }))),
    });
    for (let q = 0; q < QUESTIONS_PER_USER; q++) {
      const fact = facts[(u + q * 5) % facts.length] as (typeof facts)[number];
      const paraphrase = (u + q) % 2 === 1;
      questions.push({ userId, kind: fact.kind, text: fact.questions[paraphrase ? 1 : 0], answer: fact.answer, paraphrase });
    }
  }
  return { users, questions };
}
