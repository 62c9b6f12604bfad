// What the example's GET /api/me answers for the simulator's first player, entered through the
// example's default registration.
export const ADA = {
  openId: 'player-ada',
  unionId: 'union-ada',
  scope: ['user_info', 'basic_actions'],
  registration: 'web',
};
